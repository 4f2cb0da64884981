"""An operations tree: a root supervisor over incident, infrastructure and communications."""

"""A support desk: a triage supervisor over billing, tech support and account workers."""

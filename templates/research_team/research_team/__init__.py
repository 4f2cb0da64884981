"""A research team: a supervisor over researcher, analyst and writer, citing its sources."""

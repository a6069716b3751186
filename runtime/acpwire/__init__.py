"""acpwire: a thin trio runtime for the Agent Client Protocol on top of the generated acp_schema bindings."""

__version__ = "0.2.0"

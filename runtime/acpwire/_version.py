"""acpwire's release number, in a module of its own so any layer can read it."""

__version__ = "0.2.0"
"""This release of acpwire (the acp-schema release it requires is in its metadata)."""

"""acpwire's code generator: ACP JSON Schema -> IR -> jinja2 templates -> Python."""

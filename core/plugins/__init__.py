"""The plug-ins (worlds) known to this process: registry.py."""

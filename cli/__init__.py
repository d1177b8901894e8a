"""The command-line front end: one module per command; each exposes add_parser(sub) and run(engine_factory, args)."""

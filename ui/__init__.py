"""The Gradio web app: one module per view (layout and wiring), handler modules that call core, strings."""

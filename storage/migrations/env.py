"""Alembic environment: runs migrations on the connection that storage.db.migrate hands over."""
from alembic import context

from storage import camtrap_models  # noqa: F401  (its tables join Base.metadata)
from storage.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # command-line use: `alembic -x db=PATH upgrade head`
    from sqlalchemy import create_engine

    db = context.get_x_argument(as_dictionary=True).get("db", "data/ecolens.sqlite")
    connection = create_engine(f"sqlite:///{db}").connect()

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()

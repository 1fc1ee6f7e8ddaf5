"""Alembic environment: run migrations on the engine handed over by alertstation.db.migrate."""

from alembic import context

from alertstation.schema import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # pragma: no cover - only reached when someone runs plain `alembic`
    raise RuntimeError("run migrations with `alertstation migrate`")

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        compare_server_default=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()

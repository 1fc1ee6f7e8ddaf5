"""Operations: settings routes, backup and restore, database upkeep and upgrades."""

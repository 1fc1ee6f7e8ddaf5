"""Hash and verify account passwords with argon2id."""

from __future__ import annotations

import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters

MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1024


def hash_password(password: str) -> str:
    """Return the argon2id hash of ``password`` after checking its length."""
    validate_password(password)
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Tell whether ``password`` matches ``password_hash``."""
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def validate_password(password: str) -> None:
    """Raise ValueError when a password is too short or too long."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"password must be at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ValueError(f"password must be at most {MAX_PASSWORD_LENGTH} characters")


def generate_password() -> str:
    """Return a random password fit to print once to an operator."""
    return secrets.token_urlsafe(18)

"""The API keys table and the roles a key can carry.

Only a SHA-256 of each key is stored, plus its first characters for display: a
copy of the table is not a copy of the keys.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core.db.types import UTCDateTime


class Role(StrEnum):
    """What a key may do; every role may create operations."""

    AGENT = "agent"  # sees and acts on its own operations only
    OPERATOR = "operator"  # sees every operation, may cancel any and resolve
    ADMIN = "admin"  # everything an operator may (reserved for key administration)


class ApiKey(SQLModel, table=True):
    """One named key. `name` is the principal its operations record."""

    __tablename__ = "api_keys"
    __table_args__ = (
        UniqueConstraint("name", name="uq_api_keys_name"),
        UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    name: str
    role: str
    key_hash: str  # sha256 hex of the whole key
    key_prefix: str  # first characters after "jgk_", so people can tell keys apart
    created_at: datetime = Field(sa_type=UTCDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime, nullable=True)


class OperatorSession(SQLModel, table=True):
    """One signed-in browser (docs/security.md, "Signing in"): a person's operator key,
    presented once at `/login`, stands behind a session cookie until `expires_at`, a
    logout (`ended_at`) or the key's revoke. Only the SHA-256 of the cookie's token is
    stored, as with keys."""

    __tablename__ = "sessions"
    __table_args__ = (UniqueConstraint("token_hash", name="uq_sessions_token_hash"),)

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    token_hash: str  # sha256 hex of the cookie's token
    key_id: int = Field(
        sa_column=Column(
            BigInteger().with_variant(Integer, "sqlite"),
            ForeignKey("api_keys.id", name="fk_sessions_key_id"),
            nullable=False,
        )
    )
    created_at: datetime = Field(sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime, nullable=True)

"""Imports every table module so SQLModel.metadata knows the whole schema."""

from app.operations import models as operations_models  # noqa: F401

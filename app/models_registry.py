"""Imports every table module so SQLModel.metadata knows the whole schema."""

from app.audit import models as audit_models  # noqa: F401
from app.auth import models as auth_models  # noqa: F401
from app.callbacks import models as callbacks_models  # noqa: F401
from app.core.db import host_anchor  # noqa: F401  (the SQLite clock's anchor table)
from app.operations.domain import models as operations_models  # noqa: F401
from app.webhooks import models as webhooks_models  # noqa: F401

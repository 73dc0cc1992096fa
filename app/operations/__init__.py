"""operations package."""

"""observer package."""

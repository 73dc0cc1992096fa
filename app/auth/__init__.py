"""auth package."""

"""mock provider package."""

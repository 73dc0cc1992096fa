"""Stand-ins for providers, for tests, CI and `make run`: the bundled mock provider
(`mock`) and local fakes of real provider APIs (`providers`). Never imports the gateway
(`app`) or the client; the fakes may build on the mock, never the reverse. Not part of
the gateway's Docker image.
"""

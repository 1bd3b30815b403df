"""What every door's app shares at the ASGI level, below the doors (http/, mcp/) that use it:
the error bodies and their mapping from domain errors (`errors`), body limits (`limits`),
the trusted-host check and security headers (`hardening`), and what the app needs in front
of it behind API Gateway (`api_gateway`). It imports no door."""

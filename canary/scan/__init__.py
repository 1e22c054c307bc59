"""`canary scan`: read a downstream codebase statically and propose the matrix checks it needs."""

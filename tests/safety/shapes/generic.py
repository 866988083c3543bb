"""Shapes of credentials by context: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import ALNUM, B64, URLSAFE, Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "authorization-header": [
        lambda r: cat("Authorization: Basic ", rand(r, 28, B64), "=="),
        lambda r: cat("curl -H 'Authorization: Bearer ", rand(r, 40), "' https://api.example.com"),
        lambda r: cat('"Authorization": "token ', rand(r, 40), '"'),
    ],
    "bearer-token": [
        lambda r: cat("send Bearer ", rand(r, 40, URLSAFE), " with each call"),
        lambda r: cat("curl -H 'X-Upstream: bearer ", rand(r, 32), "'"),
        lambda r: cat("headers = {'Proxy': 'Bearer ", rand(r, 36), "'}"),
    ],
    "api-key-header": [
        lambda r: cat("X-API-Key: ", rand(r, 32)),
        lambda r: cat("curl -H 'x-goog-api-key: ", rand(r, 39, URLSAFE), "'"),
        lambda r: cat("PRIVATE-TOKEN: ", rand(r, 20, URLSAFE)),
    ],
    "cookie-header": [
        lambda r: cat("Cookie: session=", rand(r, 32)),
        lambda r: cat("Set-Cookie: sid=", rand(r, 40), "; Path=/; HttpOnly"),
        lambda r: cat('"cookie": "auth=', rand(r, 24), '"'),
    ],
    "url-credentials": [
        lambda r: "https://user:pass@host.example.net/x",
        lambda r: cat("postgres://admin:", rand(r, 16), "@db.internal:5432/app"),
        lambda r: cat("redis://:", rand(r, 20), "@cache.internal:6379/0"),
    ],
    "generic-secret": [
        lambda r: cat('password = "', rand(r, 16, ALNUM + "!#%"), '"'),
        lambda r: cat("DB_PASSWORD=", rand(r, 20)),
        lambda r: cat("client_secret: ", rand(r, 32)),
        lambda r: cat("api_key = '", rand(r, 24), "'"),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

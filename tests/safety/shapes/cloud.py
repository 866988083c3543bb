"""Shapes of cloud providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import B64, UPPER_DIGITS, URLSAFE, Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "aws-access-key-id": [
        lambda r: cat("AK", "IA", rand(r, 16, UPPER_DIGITS)),
        lambda r: cat("aws_access_key_id = AS", "IA", rand(r, 16, UPPER_DIGITS)),
        lambda r: cat("key id AK", "IA", rand(r, 16, UPPER_DIGITS), " for deploys"),
    ],
    "aws-secret-access-key": [
        lambda r: cat("aws_secret_access_key = ", rand(r, 40, B64)),
        lambda r: cat("AWS_SECRET_ACCESS_KEY: ", rand(r, 40, B64)),
        lambda r: cat('"aws_secret_key": "', rand(r, 40, B64), '"'),
    ],
    "google-api-key": [
        lambda r: cat("AI", "za", rand(r, 35, URLSAFE)),
        lambda r: cat("GOOGLE_API_KEY=AI", "za", rand(r, 35, URLSAFE)),
        lambda r: cat("maps key AI", "za", rand(r, 35, URLSAFE), " restricted"),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

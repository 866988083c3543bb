"""Shapes of private keys and signed tokens: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import Shape, cat, jwt, pem

SHAPES: dict[str, list[Shape]] = {
    "private-key": [
        lambda r: pem(r, "RSA"),
        lambda r: pem(r, "OPENSSH"),
        lambda r: pem(r, "EC"),
        lambda r: pem(r, ""),
    ],
    "jwt": [lambda r: jwt(r), lambda r: cat("session=", jwt(r)), lambda r: cat("id_token: ", jwt(r))],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

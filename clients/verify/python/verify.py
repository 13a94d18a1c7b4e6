"""Verifies one pixflow event delivery with the Standard Webhooks Python library.

Usage: PIXFLOW_WEBHOOK_SECRET=whsec_... WEBHOOK_ID=... WEBHOOK_TIMESTAMP=... \
       WEBHOOK_SIGNATURE=... python verify.py < body.json

Exits 0 when the event is pixflow's and fresh (timestamp within 5 minutes), 1 when it is not,
2 when the input is incomplete. A real receiver does the same with the request's headers and
its raw body, before parsing it.
"""

import os
import sys

from standardwebhooks import Webhook, WebhookVerificationError


def main() -> int:
    secret = os.environ.get("PIXFLOW_WEBHOOK_SECRET", "")
    if not secret:
        print(
            "usage: set PIXFLOW_WEBHOOK_SECRET (whsec_...), WEBHOOK_ID, WEBHOOK_TIMESTAMP and "
            "WEBHOOK_SIGNATURE; the raw body on stdin",
            file=sys.stderr,
        )
        return 2
    headers = {
        "webhook-id": os.environ.get("WEBHOOK_ID", ""),
        "webhook-timestamp": os.environ.get("WEBHOOK_TIMESTAMP", ""),
        "webhook-signature": os.environ.get("WEBHOOK_SIGNATURE", ""),
    }
    # The exact bytes received: any re-encoding of the JSON would change what was signed.
    body = sys.stdin.buffer.read()
    try:
        webhook = Webhook(secret)
    except Exception as err:  # binascii.Error for bad base64, EmptyWebhookSecretError
        print(f"the secret is not a whsec_ base64 key: {err}", file=sys.stderr)
        return 2
    try:
        # verify also refuses a timestamp more than 5 minutes away from now: a replay.
        event = webhook.verify(body, headers)
    # ValueError: a malformed signature list, or a body that is not UTF-8 JSON.
    except (WebhookVerificationError, ValueError) as err:
        print(f"invalid event: {err}", file=sys.stderr)
        return 1
    print(f"verified {headers['webhook-id']} {event['type']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

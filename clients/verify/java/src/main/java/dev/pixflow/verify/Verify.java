package dev.pixflow.verify;

import com.standardwebhooks.Webhook;
import com.standardwebhooks.exceptions.EmptyWebhookSecretException;
import com.standardwebhooks.exceptions.WebhookVerificationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Verifies one pixflow event delivery with the Standard Webhooks Java library.
 *
 * <p>Usage: {@code PIXFLOW_WEBHOOK_SECRET=whsec_... WEBHOOK_ID=... WEBHOOK_TIMESTAMP=...
 * WEBHOOK_SIGNATURE=... java -jar verify.jar < body.json}
 *
 * <p>Exits 0 when the event is pixflow's and fresh (timestamp within 5 minutes), 1 when it is not,
 * 2 when the input is incomplete. A real receiver does the same with the request's headers and its
 * raw body, before parsing it.
 */
public final class Verify {
  private Verify() {}

  public static void main(String[] args) throws IOException {
    System.exit(run());
  }

  static int run() throws IOException {
    String secret = System.getenv("PIXFLOW_WEBHOOK_SECRET");
    if (secret == null || secret.isEmpty()) {
      System.err.println(
          "usage: set PIXFLOW_WEBHOOK_SECRET (whsec_...), WEBHOOK_ID, WEBHOOK_TIMESTAMP and"
              + " WEBHOOK_SIGNATURE; the raw body on stdin");
      return 2;
    }
    String id = envOrEmpty("WEBHOOK_ID");
    Map<String, List<String>> headers =
        Map.of(
            "webhook-id", List.of(id),
            "webhook-timestamp", List.of(envOrEmpty("WEBHOOK_TIMESTAMP")),
            "webhook-signature", List.of(envOrEmpty("WEBHOOK_SIGNATURE")));
    // The exact bytes received (pixflow sends UTF-8 JSON): any re-encoding would change what was signed.
    String body = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
    Webhook webhook;
    try {
      webhook = new Webhook(secret);
    } catch (EmptyWebhookSecretException | IllegalArgumentException e) {
      System.err.println("the secret is not a whsec_ base64 key: " + e.getMessage());
      return 2;
    }
    try {
      // verify also refuses a timestamp more than 5 minutes away from now: a replay.
      webhook.verify(body, headers);
    } catch (WebhookVerificationException e) {
      System.err.println("invalid event: " + e.getMessage());
      return 1;
    }
    System.out.println("verified " + id);
    return 0;
  }

  private static String envOrEmpty(String name) {
    String value = System.getenv(name);
    return value == null ? "" : value;
  }
}

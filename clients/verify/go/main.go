// Verifies one pixflow event delivery with the Standard Webhooks Go library.
//
// Usage: PIXFLOW_WEBHOOK_SECRET=whsec_... WEBHOOK_ID=... WEBHOOK_TIMESTAMP=... \
//
//	WEBHOOK_SIGNATURE=... verify < body.json
//
// Exits 0 when the event is pixflow's and fresh (timestamp within 5 minutes), 1 when it is not,
// 2 when the input is incomplete. A real receiver does the same with the request's headers and
// its raw body, before parsing it.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	os.Exit(run())
}

func run() int {
	secret := os.Getenv("PIXFLOW_WEBHOOK_SECRET")
	headers := http.Header{}
	for name, env := range map[string]string{
		"webhook-id":        "WEBHOOK_ID",
		"webhook-timestamp": "WEBHOOK_TIMESTAMP",
		"webhook-signature": "WEBHOOK_SIGNATURE",
	} {
		headers.Set(name, os.Getenv(env))
	}
	if secret == "" {
		fmt.Fprintln(os.Stderr, "usage: set PIXFLOW_WEBHOOK_SECRET (whsec_...), WEBHOOK_ID, WEBHOOK_TIMESTAMP and WEBHOOK_SIGNATURE; the raw body on stdin")
		return 2
	}
	// The exact bytes received: any re-encoding of the JSON would change what was signed.
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read the body: %v\n", err)
		return 2
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the secret is not a whsec_ base64 key: %v\n", err)
		return 2
	}
	// Verify also refuses a timestamp more than 5 minutes away from now: a replay.
	if err := wh.Verify(body, headers); err != nil {
		fmt.Fprintf(os.Stderr, "invalid event: %v\n", err)
		return 1
	}
	var event struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &event); err != nil {
		fmt.Fprintf(os.Stderr, "verified, but the body is not JSON: %v\n", err)
		return 1
	}
	fmt.Printf("verified %s %s\n", headers.Get("webhook-id"), event.Type)
	return 0
}

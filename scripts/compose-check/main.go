// compose-check loads a Compose file the way `docker compose config` does (compose-go, the
// Compose specification's reference loader: schema validation, interpolation, required
// variables) with only the given env file for variables, and prints the services it found, or
// with --json the whole resolved project (what `docker compose config --format json` prints:
// every service's command, entrypoint, environment after interpolation, depends_on,
// healthcheck, deploy). pixflow's tests run it on docker-compose.yml where no Docker engine
// runs: with .env.example to check it loads, and with fresh secrets to run its services.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	args := os.Args[1:]
	asJSON := len(args) > 0 && args[0] == "--json"
	if asJSON {
		args = args[1:]
	}
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check [--json] <compose file> <env file>")
		os.Exit(2)
	}
	opts, err := cli.NewProjectOptions(
		[]string{args[0]},
		cli.WithName("pixflow"),
		cli.WithEnvFiles(args[1]),
		cli.WithDotEnv,
	)
	if err != nil {
		fail(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	if asJSON {
		out, err := project.MarshalJSON()
		if err != nil {
			fail(err)
		}
		fmt.Println(string(out))
		return
	}
	names := project.ServiceNames()
	sort.Strings(names)
	for _, name := range names {
		fmt.Println(name)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

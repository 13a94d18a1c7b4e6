// compose-check loads a Compose file the way `docker compose config` does (compose-go, the
// Compose specification's reference loader: schema validation, interpolation, required
// variables) with only the given env file for variables, and prints the services it found.
// pixflow's tests run it on docker-compose.yml with .env.example, where no Docker engine runs.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: compose-check <compose file> <env file>")
		os.Exit(2)
	}
	opts, err := cli.NewProjectOptions(
		[]string{os.Args[1]},
		cli.WithName("pixflow"),
		cli.WithEnvFiles(os.Args[2]),
		cli.WithDotEnv,
	)
	if err != nil {
		fail(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
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

// Command ytrend keeps a YouTube trending archive fresh for many regions
// without running out of API quota, and searches it locally.
package main

import (
	"context"
	"os"
)

func main() {
	cli := newCLI(os.Stdout, os.Stderr, os.LookupEnv)
	os.Exit(cli.execute(context.Background(), os.Args[1:]))
}

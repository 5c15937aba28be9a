package main

import (
	"fmt"
	"io"
)

// tellUser prints, for a command a person runs in a terminal, what each
// stage of the stop does: the first, "<what>, then stopping".
func tellUser(w io.Writer, what string) func(string, bool) {
	return func(sig string, hard bool) {
		if hard {
			fmt.Fprintf(w, "ytrend: second %s: stopping now\n", sig)
			return
		}
		fmt.Fprintf(w, "ytrend: %s: %s, then stopping (send again to stop at once)\n", sig, what)
	}
}

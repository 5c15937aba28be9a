// Package humanfmt formats numbers for people: the terminal's tables and the
// web pages print counts the same way.
package humanfmt

import "fmt"

// Count prints 1234567 as 1.2M, 1234 as 1.2K, 999 as 999.
func Count(n int64) string {
	switch {
	case n >= 1_000_000_000:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

package quota_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestLibraryNameIsItsWholeText: the library's name is the hash of exactly
// the text FUNCTION LOAD is sent, its own digits aside, so a change of any
// byte (the header, a register_function wrapper, the shared code, a body)
// gives another name, and no two texts share one.
func TestLibraryNameIsItsWholeText(t *testing.T) {
	name, code := quota.Library()
	if strings.Contains(code, quota.LibraryPlaceholder) {
		t.Fatalf("the code holds the placeholder %q", quota.LibraryPlaceholder)
	}
	text := strings.ReplaceAll(code, name, quota.LibraryPlaceholder)
	if got := quota.LibraryName(text); got != name {
		t.Fatalf("the hash of the text sent = %s, the library is named %s", got, name)
	}
	// The name stands only in the header and the functions' names: nothing
	// else of the text is left out of the hash.
	if n, want := strings.Count(text, quota.LibraryPlaceholder), 1+strings.Count(text, "redis.register_function{"); n != want {
		t.Fatalf("the name appears %d times, want %d (the header and each function)", n, want)
	}

	// Mutations: every byte of the lines newLibrary writes itself (the
	// header, the wrappers and their ends), one byte of every other line,
	// and the text cut short or grown by one byte.
	var texts []string
	start := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		ours := strings.HasPrefix(line, "#!lua") || strings.HasPrefix(line, "redis.register_function") || line == "end}\n"
		for i := range line {
			if i > 0 && !ours {
				break
			}
			b := []byte(text)
			b[start+i] ^= 0x20
			texts = append(texts, string(b))
		}
		start += len(line)
	}
	texts = append(texts, text[:len(text)-1], text+"\n")
	seen := map[string]int{name: -1}
	for i, m := range texts {
		got := quota.LibraryName(m)
		if j, ok := seen[got]; ok {
			t.Fatalf("mutation %d shares the name %s with %d", i, got, j)
		}
		seen[got] = i
	}
	if len(texts) < 1000 {
		t.Fatalf("only %d mutations", len(texts))
	}
}

// TestLibraryOfAnotherBuild: another build whose library differs from this
// one's only in a function's wrapper (here one that raises reserve's first
// limit tenfold; the old scheme gave such a build ytrend's name) loads under
// its own name beside ytrend's, and ytrend's reservations keep calling
// ytrend's code: 20 units of a 20-unit hour, never more.
func TestLibraryOfAnotherBuild(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	cfg := faultCfg()
	begin(t, cfg, quota.NewRedis(openURL(t, srv.URL())))
	var book ledgerBook
	l := newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())), quota.WithObserver(book.add))
	mustGrant(t, l, "videos.list") // ytrend's library is loaded

	name, code := quota.Library()
	wrapper := "_reserve', callback = function(KEYS, ARGV)\n"
	if !strings.Contains(code, wrapper) {
		t.Fatalf("the library has no %q", wrapper)
	}
	text := strings.ReplaceAll(code, name, quota.LibraryPlaceholder)
	// ARGV[7] is "<grace> <units_1> ...": ten times the first limit's units.
	text = strings.Replace(text, wrapper,
		wrapper+"ARGV[7] = (string.gsub(ARGV[7], '^(%d+) (%d+)', function(g, u) return g .. ' ' .. u .. '0' end))\n", 1)
	other := quota.LibraryName(text)
	ctx := context.Background()
	rdb := srv.Client()
	// FUNCTION LOAD without REPLACE: it fails if the name is taken.
	if err := rdb.FunctionLoad(ctx, strings.ReplaceAll(text, quota.LibraryPlaceholder, other)).Err(); err != nil {
		t.Fatalf("loading the other build's library %s beside %s: %v", other, name, err)
	}
	for range 25 {
		if _, err := l.Reserve(ctx, "videos.list"); err != nil && !errors.Is(err, quota.ErrRefused) {
			t.Fatalf("Reserve: %v", err)
		}
	}
	if got := book.total(); got != 20 {
		t.Errorf("granted %d units in the window, want the limit of 20", got)
	}
}

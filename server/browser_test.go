package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless-capable Chromium: skipped locally when it
// is missing, a failure under CI (which installs it: .ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is required under CI (apt-get install chromium) but missing")
	}
	t.Skip("skipping: no chromium at /usr/bin/chromium (apt-get install chromium, or set CHROMIUM)")
	return ""
}

// artifacts is where screenshots go: $YTREND_ARTIFACTS_DIR, else a new
// temporary directory that outlives the test (its path is logged).
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("YTREND_ARTIFACTS_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ytrend-serve-artifacts-"); err != nil {
			t.Fatal(err)
		}
	}
	dir = filepath.Join(dir, "serve-browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// TestBrowser drives a real headless Chromium through the pages: the home
// page with its chart, a search, a video page with its SVG rank plot, at
// desktop and at phone width, where nothing may overflow sideways.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	e := newEnv(t)
	dir := artifacts(t)
	word := aWord(t, e.db)

	// Not t.TempDir: Chromium may still be writing its profile when the
	// test's cleanup runs, which then fails the test; removed best-effort.
	profile, err := os.MkdirTemp("", "ytrend-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		// No network: thumbnails on i.ytimg.com fail at once (their alt
		// text shows) instead of waiting on DNS.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(profile),
		// Chromium's first start, beside the rest of the suite under
		// -race, took over chromedp's default 20 s to print its DevTools
		// address in a CI run ("websocket url timeout reached"). The wait
		// is on that line; this only bounds it.
		chromedp.WSURLReadTimeout(90*time.Second),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()

	// shot saves the whole page at desktop width, the first screenful at
	// phone width (a full page of 200 entries at 3x is tens of megabytes).
	shot := func(name string, full bool) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte
			var err error
			if full {
				err = chromedp.FullScreenshot(&buf, 70).Do(ctx)
			} else {
				err = chromedp.CaptureScreenshot(&buf).Do(ctx)
			}
			if err != nil {
				return err
			}
			ext := ".png"
			if full {
				ext = ".jpg"
			}
			t.Logf("%s%s: %d bytes", name, ext, len(buf))
			return os.WriteFile(filepath.Join(dir, name+ext), buf, 0o644)
		})
	}
	var entries, hits, marks, plotLines, plotPoints int
	var plotTitle, videoHref string
	var overflowHome, overflowVideo bool
	err = chromedp.Run(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(`ol.chart li`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ol.chart li").length`, &entries),
		shot("home-desktop", true),
		// Search from the header form, as a person would.
		chromedp.SendKeys(`#hq`, word, chromedp.ByID),
		chromedp.Submit(`#hq`, chromedp.ByID),
		chromedp.WaitVisible(`ul.hits li`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ul.hits li").length`, &hits),
		chromedp.Evaluate(`document.querySelectorAll("ul.hits mark").length`, &marks),
		shot("search-desktop", true),
		chromedp.AttributeValue(`ul.hits li a.title`, "href", &videoHref, nil, chromedp.ByQuery),
		chromedp.Click(`ul.hits li a.title`, chromedp.ByQuery),
		chromedp.WaitVisible(`svg#rank-plot`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("svg#rank-plot polyline").length`, &plotLines),
		chromedp.Evaluate(`document.querySelectorAll("svg#rank-plot circle").length`, &plotPoints),
		chromedp.TextContent(`#rank-plot-title`, &plotTitle, chromedp.ByID),
		shot("video-desktop", true),
		// Phone width: an iPhone 13's viewport, touch and all.
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(`ol.chart li`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflowHome),
		shot("home-phone", false),
		// From the chart to a video, by tapping its title.
		chromedp.Click(`ol.chart li a.title`, chromedp.ByQuery),
		chromedp.WaitVisible(`svg#rank-plot`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflowVideo),
		shot("video-phone", false),
	)
	if err != nil {
		t.Fatal(err)
	}
	if entries != 200 {
		t.Errorf("home: %d chart entries rendered, want 200", entries)
	}
	if hits != 20 || marks == 0 {
		t.Errorf("search %q: %d results, %d highlights; want 20 and some", word, hits, marks)
	}
	if plotLines+plotPoints == 0 || plotTitle != "Rank over time per region (1 is the top of the chart)" {
		t.Errorf("video %s: %d lines, %d points, title %q", videoHref, plotLines, plotPoints, plotTitle)
	}
	if overflowHome || overflowVideo {
		t.Errorf("phone width: the page scrolls sideways (home %v, video %v)", overflowHome, overflowVideo)
	}
	for _, n := range []string{"home-desktop.jpg", "search-desktop.jpg", "video-desktop.jpg", "home-phone.png", "video-phone.png"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || fi.Size() < 1000 {
			t.Errorf("screenshot %s: %v", n, err)
		}
	}
}

// TestBrowserNoAmplifier loads, in a real browser, the chart of an archive
// an older import filled with a thumbnail_link of "/api/v1/search?...":
// before, each visitor's browser sent that search as an image request
// (img-src 'self' allowed it), so one chart page made every visitor run up
// to 200 searches. The page must cause no request but its own and its
// stylesheet.
func TestBrowserNoAmplifier(t *testing.T) {
	bin := chromium(t)
	e := hostileArchive(t)
	var searches, others atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/"):
			searches.Add(1)
		case r.URL.Path != "/charts/US" && !strings.HasPrefix(r.URL.Path, "/static/") && r.URL.Path != "/favicon.ico":
			others.Add(1)
		}
		e.handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	profile, err := os.MkdirTemp("", "ytrend-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(profile),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, time.Minute)
	defer cancelT()
	var entries int
	var state string
	// Navigate returns after the load event, which waits for every image.
	err = chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/charts/US"),
		chromedp.WaitVisible(`ol.chart li`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ol.chart li").length`, &entries),
		chromedp.Evaluate(`document.readyState`, &state),
	)
	if err != nil {
		t.Fatal(err)
	}
	if entries != 4 || state != "complete" {
		t.Fatalf("%d entries, readyState %q", entries, state)
	}
	if n, o := searches.Load(), others.Load(); n != 0 || o != 0 {
		t.Errorf("the chart page made the browser send %d API requests and %d others", n, o)
	}
}

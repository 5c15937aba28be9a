package dataset

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Parsing the fields of the public formats: dates, counts, booleans, tags.

// YouTube's ids are letters, digits, - and _ (eleven of them for videos;
// the bound is loose so that other archives' ids pass).
var videoID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

var date2017 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d{2})\.(\d{2})\.(\d{2})$`) })

// parseDate2017 reads the 2017-18 dataset's YY.DD.MM.
func parseDate2017(s string) (time.Time, error) {
	m := date2017().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not a date as this dataset writes them (YY.DD.MM, e.g. 17.14.11)", s)
	}
	y, _ := strconv.Atoi(m[1])
	d, _ := strconv.Atoi(m[2])
	mo, _ := strconv.Atoi(m[3])
	t := time.Date(2000+y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != mo {
		return time.Time{}, fmt.Errorf("%q is not a date (YY.DD.MM: day %d of month %d)", s, d, mo)
	}
	return t, nil
}

// parseDay reads an ISO trending_date: 2020-08-12T00:00:00Z or 2020-08-12.
func parseDay(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date (e.g. 2020-08-12T00:00:00Z or 2020-08-12)", s)
}

// parseTime reads a publish time: RFC 3339 with or without fractions, as
// the datasets write it, or as pandas re-saves it. Empty is the zero time.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (e.g. 2020-08-11T19:20:14Z)", s)
}

// parseCount reads a count: empty is hidden; 123.0 (a re-saved column
// that had a gap) is 123.
func parseCount(s string) (*int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, ".0"), 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q is not a count", s)
	}
	return &n, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, nil
	case "false", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not True or False", s)
}

// tags2020 reads a|b|c; [None] is no tags.
func tags2020(s string) []string {
	if s == "" || strings.EqualFold(s, "[none]") {
		return nil
	}
	return strings.Split(s, "|")
}

// tags2017 reads the 2017-18 dataset's "a"|"b"|"c" in the forms CSV
// readers leave it in: a"|"b"|"c (strict-ish, as here), "a"|"b"|"c", or
// a|"b"|"c" (Python's reader drops the first quote pair); [none] is no
// tags, and a field with no quotes at all is a|b|c.
func tags2017(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "[none]") {
		return nil
	}
	var parts []string
	if !strings.Contains(s, `"`) {
		parts = strings.Split(s, "|")
	} else {
		s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
		i, j := strings.Index(s, `|"`), strings.Index(s, `"|"`)
		if i >= 0 && (j < 0 || i < j) {
			s = s[:i] + `"` + s[i:] // a|"b"|"c -> a"|"b"|"c
		}
		parts = strings.Split(s, `"|"`)
	}
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(strings.Trim(p, `"`)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

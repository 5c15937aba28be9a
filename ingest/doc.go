// Package ingest turns quota into data: it fetches a region's mostPopular
// chart (and optional search.list queries) from the YouTube Data API v3 and
// stores each page in the archive as it arrives.
//
// Key decisions:
//   - Every request reserves its units from the shared budget first, and each
//     retry reserves again: Google charges every request, failed ones too.
//   - A refusal ends the run cleanly as stopped_quota with the refusing limit
//     and the time quota frees up; the fetch never sleeps for a Retry-After.
//     Pages stored before the refusal stay.
//   - Google's own quotaExceeded (or a 429 naming a per-day limit) marks the
//     credential exhausted until the next midnight Pacific, so no other
//     process keeps knocking.
//   - The API key is added by Google's transport (option.WithAPIKey) and never
//     appears in an error, log line or the database: transport errors carry
//     the request URL, so they are redacted at this package's boundary.
//   - Before the chart, the region's category names come from
//     videoCategories.list at most once per region per quota day, reserved
//     like every call; failing to get them never stops the chart.
//   - Statistics are read from the raw JSON as well as the typed client,
//     because the typed client decodes an absent likeCount (hidden by the
//     owner) and "0" to the same 0; the archive keeps them apart.
package ingest

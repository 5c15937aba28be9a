// Package sim is a simulated YouTube: an http.Handler that speaks the part
// of the YouTube Data API v3 ytrend uses, so that ytrend's fetching, retries
// and quota accounting can be tested end to end, over real HTTP, with the
// real Go client, without calling Google.
//
// What it serves, as Google does (paths, parameters, JSON shapes, error
// bodies):
//
//   - videos.list: chart=mostPopular for every region YouTube lists (at most
//     200 videos, pages of 1-50) and id=a,b,c (up to 50); parts snippet,
//     contentDetails, statistics and id, repeated or comma-joined.
//   - search.list over the videos of the last eight days: q, type, order,
//     regionCode, publishedAfter/Before, channelId, videoCategoryId, ...
//   - i18nRegions.list, and videoCategories.list (regionCode or id; the same
//     English list for every region, as the real API answers regionCode=US).
//
// The key decision is to be as strict and as stingy as Google, so that code
// which passes against the simulator works against the real API: every
// request is charged (invalid ones too, faulted ones too, one the client gave
// up on too), a key's quota runs out at exactly Config.Quota units and resets
// at midnight Pacific, a spent quota answers the exact quotaExceeded body,
// hidden like and comment counts are absent rather than "0", page tokens are
// opaque and bound to their query, and faults come as the real API's bad days
// do (see Faults). What the simulator does not model (other methods, other
// parts) it refuses loudly rather than answering with less; the one thing it
// ignores is fields= (partial responses), so answers are never smaller than
// asked for.
//
// Content is generated, deterministic per Config.Seed and time (see world.go
// for the model): daily cohorts of videos per market in the region's
// languages, channels that recur across regions, videos that trend in
// several regions, and ranks that churn every Config.Churn. A paginated fetch
// sees one consistent chart because its page tokens carry the chart's epoch.
//
// Beside the API the server answers /sim/usage (units charged per key, keyed
// by Fingerprint, never by the key), /sim/faults (read or change the injected
// faults at run time), /sim/chart (a chart's IDs, free) and /sim/healthz.
// The ytrend simulate command serves it on a port.
package sim

// Package dataset reads and writes trending charts as CSV in the layouts of
// the public "Trending YouTube Video Statistics" datasets, which are how
// people hold trending history since YouTube removed its Trending page:
//
//   - 2017-18 (USvideos.csv, GBvideos.csv, ...): trending_date as YY.DD.MM,
//     tags as "a"|"b" (written unescaped, so the file is not strict CSV),
//     "[none]" for no tags, descriptions with \n written as two characters,
//     no channel id;
//   - 2020 onwards (US_youtube_trending_data.csv, ...): ISO dates, tags as
//     a|b, "[None]" for no tags, channelId, view_count;
//   - ytrend's own export: the 2020 columns in their order, then region,
//     rank and fetched_at, one row per chart position fetched.
//
// A file's layout is told by its header, never by its name (the name gives
// the region of the public ones). Real copies carry a byte order mark or
// CRLF line ends, quote every field or none, re-save numbers as 123.0, hold
// Excel's "#NAME?" for ids that began with a minus sign, and are often cut
// off in the middle of their last record; [Reader] takes all of that.
//
// The key decision: a row is the unit of damage. A row that cannot be read
// (a bad date, a broken id, a missing field, the record cut off at the end
// of the file) is skipped and reported with its line and field, and every
// other row is imported; only a file whose header matches no layout is
// refused as a whole, with the columns each layout expects.
//
// Hidden counts are empty, never 0, on the way out; on the way in, a count
// of a public file whose ratings_disabled or comments_disabled is True is
// taken as hidden.
package dataset

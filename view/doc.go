// Package view is ytrend's read model: what a person can ask of the archive
// and the budget (a search, a chart, a video's history, the runs, the
// budget's status), parsed from a request, loaded from store and quota, and
// shaped as the JSON the CLI's --json prints and /api/v1 serves. apiv1 (JSON)
// and web (pages) are two thin HTTP adapters over it, side by side; neither
// imports the other.
//
// Key decision: one struct per concept, so that `ytrend search --json` and
// GET /api/v1/search agree field for field; a field of the wire format is
// changed here and nowhere else.
package view

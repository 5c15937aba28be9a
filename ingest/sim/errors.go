package sim

import (
	"fmt"
	"net/http"
	"strings"
)

// The error bodies Google's API front end sends, field for field. The ones
// the notes quote exactly (quotaExceeded, the 2026 invalid-key answer, the
// search bucket's 429) are reproduced exactly; the parameter errors follow
// YouTube's documented reasons with messages in Google's style.

// apiError is the "error" member of an error body.
type apiError struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Errors  []errorItem `json:"errors"`
	Status  string      `json:"status,omitempty"`
	Details []any       `json:"details,omitempty"`
}

type errorItem struct {
	Message      string `json:"message"`
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
}

type errorBody struct {
	Error *apiError `json:"error"`
}

// errorInfo is a google.rpc.ErrorInfo detail.
type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata"`
}

type localizedMessage struct {
	Type    string `json:"@type"`
	Locale  string `json:"locale"`
	Message string `json:"message"`
}

type helpDetail struct {
	Type  string     `json:"@type"`
	Links []helpLink `json:"links"`
}

type helpLink struct {
	Description string `json:"description"`
	URL         string `json:"url"`
}

const (
	typeErrorInfo        = "type.googleapis.com/google.rpc.ErrorInfo"
	typeLocalizedMessage = "type.googleapis.com/google.rpc.LocalizedMessage"
	typeHelp             = "type.googleapis.com/google.rpc.Help"
	service              = "youtube.googleapis.com"
)

func simple(code int, domain, reason, msg string) *apiError {
	return &apiError{Code: code, Message: msg, Errors: []errorItem{{Message: msg, Domain: domain, Reason: reason}}}
}

func param(code int, domain, reason, location, msg string) *apiError {
	return &apiError{Code: code, Message: msg, Errors: []errorItem{{
		Message: msg, Domain: domain, Reason: reason, Location: location, LocationType: "parameter",
	}}}
}

// errKeyInvalid is the answer to a missing or unknown API key (2026 form).
func errKeyInvalid() *apiError {
	const msg = "API key not valid. Please pass a valid API key."
	e := simple(http.StatusBadRequest, "global", "badRequest", msg)
	e.Status = "INVALID_ARGUMENT"
	e.Details = []any{
		errorInfo{Type: typeErrorInfo, Reason: "API_KEY_INVALID", Domain: "googleapis.com", Metadata: map[string]string{"service": service}},
		localizedMessage{Type: typeLocalizedMessage, Locale: "en-US", Message: msg},
	}
	return e
}

// errQuotaExceeded is the answer once the day's units are spent.
func errQuotaExceeded() *apiError {
	return simple(http.StatusForbidden, "youtube.quota", "quotaExceeded",
		`The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.`)
}

// SearchQuotaLimit is the quota_limit a spent search.list bucket names in its
// 429 (Google's 2026 pricing); a client tells it from short-term throttling
// by this per-day limit.
const SearchQuotaLimit = "defaultSearchListPerDayPerProject"

// errSearchQuota is the 429 once the day's search.list calls are spent.
func errSearchQuota(project string, limit int64) *apiError {
	return errQuota429(project, "Search list requests", "Search list requests per day",
		"search_list_requests", SearchQuotaLimit, fmt.Sprint(limit))
}

// errRateLimit403 is YouTube's classic short-term throttling answer.
func errRateLimit403() *apiError {
	return simple(http.StatusForbidden, "usageLimits", "rateLimitExceeded", "Rate Limit Exceeded")
}

// errRateLimit429 is the front end's per-minute throttling: the same reason
// as a spent per-day bucket, but a per-minute quota_limit, so a client that
// reads the details retries instead of giving up for the day.
func errRateLimit429(project string) *apiError {
	return errQuota429(project, "Queries", "Queries per minute", "default", "defaultPerMinutePerProject", "180000")
}

// errQuota429 is the Cloud front end's RESOURCE_EXHAUSTED answer: which
// bucket ran out is only in the ErrorInfo's quota_limit.
func errQuota429(project, metric, limitName, metricID, limitID, limitValue string) *apiError {
	msg := fmt.Sprintf("Quota exceeded for quota metric '%s' and limit '%s' of service '%s' for consumer 'project_number:%s'.",
		metric, limitName, service, project)
	e := simple(http.StatusTooManyRequests, "global", "rateLimitExceeded", msg)
	e.Status = "RESOURCE_EXHAUSTED"
	e.Details = []any{
		errorInfo{Type: typeErrorInfo, Reason: "RATE_LIMIT_EXCEEDED", Domain: "googleapis.com", Metadata: map[string]string{
			"service":           service,
			"consumer":          "projects/" + project,
			"quota_metric":      service + "/" + metricID,
			"quota_limit":       limitID,
			"quota_limit_value": limitValue,
			"quota_location":    "global",
		}},
		helpDetail{Type: typeHelp, Links: []helpLink{{
			Description: "Request a higher quota limit.",
			URL:         "https://cloud.google.com/docs/quotas/help/request_increase",
		}}},
	}
	return e
}

func errBackend500() *apiError {
	e := simple(http.StatusInternalServerError, "global", "backendError", "Backend Error")
	e.Status = "INTERNAL"
	return e
}

func errBackend503() *apiError {
	e := simple(http.StatusServiceUnavailable, "global", "backendError", "The service is currently unavailable.")
	e.Status = "UNAVAILABLE"
	return e
}

func errRequired(name string) *apiError {
	return param(http.StatusBadRequest, "global", "required", name, "Required parameter: "+name)
}

// errUnknownPart names the offending part as its whole message, as YouTube
// does.
func errUnknownPart(part string) *apiError {
	return param(http.StatusBadRequest, "youtube.part", "unknownPart", "part", part)
}

func errInvalidRegion(method string) *apiError {
	return param(http.StatusBadRequest, "youtube.parameter", "invalidRegionCode", "regionCode",
		fmt.Sprintf(`The <code><a href="/youtube/v3/docs/%s/list#regionCode">regionCode</a></code> parameter specifies an invalid region code.`, method))
}

func errInvalidPageToken() *apiError {
	return param(http.StatusBadRequest, "youtube.parameter", "invalidPageToken", "pageToken",
		"The request specifies an invalid page token.")
}

func errRange(name, value string, lo, hi int) *apiError {
	return param(http.StatusBadRequest, "global", "invalidParameter", name,
		fmt.Sprintf("Invalid value '%s'. Values must be within the range: [%d, %d]", value, lo, hi))
}

// errEnum lists the allowed values in lower case, as the front end does.
func errEnum(name, value string, allowed []string) *apiError {
	low := make([]string, len(allowed))
	for i, a := range allowed {
		low[i] = strings.ToLower(a)
	}
	return param(http.StatusBadRequest, "global", "invalidParameter", name,
		fmt.Sprintf("Invalid string value: '%s'. Allowed values: [%s]", value, strings.Join(low, ", ")))
}

func errDateTime(name, value string) *apiError {
	return param(http.StatusBadRequest, "global", "invalidParameter", name,
		fmt.Sprintf("Invalid value '%s' for %s: want an RFC 3339 date-time such as 1970-01-01T00:00:00Z", value, name))
}

func errNoFilter() *apiError { return errNoFilterOf("chart", "id", "myRating") }

func errNoFilterOf(names ...string) *apiError {
	return param(http.StatusBadRequest, "youtube.parameter", "missingRequiredParameter", "parameters.",
		"No filter selected. Expected one of: "+strings.Join(names, ", "))
}

func errIncompatible(names ...string) *apiError {
	return param(http.StatusBadRequest, "youtube.parameter", "incompatibleParameters", "parameters.",
		"Incompatible parameters specified in the request: "+strings.Join(names, ", "))
}

func errTooManyIDs() *apiError {
	return param(http.StatusBadRequest, "youtube.parameter", "invalidFilters", "id",
		"The request specifies an invalid filter parameter: at most 50 ids may be given.")
}

func errChartNotFound() *apiError {
	return param(http.StatusBadRequest, "youtube.video", "videoChartNotFound", "videoCategoryId",
		"The requested video chart is not supported or is not available.")
}

func errSearchFilter() *apiError {
	return param(http.StatusBadRequest, "youtube.search", "invalidSearchFilter", "type",
		"The request contains an invalid combination of search filters and/or restrictions. Note that you must set the <code>type</code> parameter to <code>video</code> if you set either the <code>forContentOwner</code>, <code>forDeveloper</code>, <code>forMine</code>, <code>relatedToVideoId</code>, <code>videoCaption</code>, <code>videoCategoryId</code>, <code>videoDefinition</code>, <code>videoDimension</code>, <code>videoDuration</code>, <code>videoEmbeddable</code>, <code>videoLicense</code>, <code>videoSyndicated</code>, or <code>videoType</code> parameters.")
}

func errNeedsAuth(name string) *apiError {
	return param(http.StatusUnauthorized, "youtube.parameter", "authorizationRequired", name,
		fmt.Sprintf("The request uses the <code>%s</code> parameter but is not properly authorized.", name))
}

func errNotFound() *apiError {
	return simple(http.StatusNotFound, "global", "notFound", "Not Found")
}

func errMethod() *apiError {
	return simple(http.StatusMethodNotAllowed, "global", "httpMethodNotAllowed", "HTTP method not allowed")
}

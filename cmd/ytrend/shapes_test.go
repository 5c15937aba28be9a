package main

import "github.com/ytrend/ytrend/view"

// The --json shapes moved to apiv1 (the API serves the same ones); the
// tests keep their short names.
type (
	runJSON         = view.Run
	quotaStatusJSON = view.QuotaStatus
)

package main

import "github.com/ytrend/ytrend/apiv1"

// The --json shapes moved to apiv1 (the API serves the same ones); the
// tests keep their short names.
type (
	runJSON         = apiv1.Run
	quotaStatusJSON = apiv1.QuotaStatus
)

package ingest

import (
	"log/slog"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/secret"
)

// OptionsFrom is the fetcher's part of ytrend's configuration, with the API
// key read from the environment.
func OptionsFrom(cfg *config.Config, key secret.Value, log *slog.Logger) Options {
	return Options{
		Endpoint: cfg.YouTube.Endpoint, APIKey: key,
		Timeout: cfg.YouTube.Timeout.D(), Retries: cfg.YouTube.Retries,
		Backoff: cfg.YouTube.Backoff.D(), MaxBackoff: cfg.YouTube.MaxBackoff.D(),
		Logger: log,
	}
}

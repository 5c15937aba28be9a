package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// categoryFlagHelp is the --category flag's help, shared by chart, search
// and export.
const categoryFlagHelp = "only videos in this category: its name (as videoCategories.list gives it, any case) or its id"

// categoryIDs reads a --category flag ("" = no filter): an id as it is, or
// a name looked up in the regions' cached names (every region's when none
// is given). An unknown name is a usage error listing the known ones.
func categoryIDs(ctx context.Context, db *store.DB, arg string, rs []regions.Code) ([]string, error) {
	if arg == "" {
		return nil, nil
	}
	ids, err := db.CategoryIDs(ctx, arg, rs...)
	if errors.Is(err, store.ErrUnknownCategory) {
		return nil, usageError{fmt.Errorf("--category %s", strings.TrimPrefix(err.Error(), store.ErrUnknownCategory.Error()+": "))}
	}
	return ids, err
}

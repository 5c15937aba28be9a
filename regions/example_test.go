package regions_test

import (
	"errors"
	"fmt"

	"github.com/ytrend/ytrend/regions"
)

func ExampleParse() {
	c, err := regions.Parse(" de ")
	fmt.Println(c, c.Name(), err)

	_, err = regions.Parse("UK")
	fmt.Println(err)
	fmt.Println(errors.Is(err, regions.ErrUnknown))
	// Output:
	// DE Germany <nil>
	// "UK" is not a region code; did you mean "GB"?
	// true
}

func ExampleDefault() {
	for _, c := range regions.Default() {
		fmt.Printf("%s %s\n", c, c.Name())
	}
	// Output:
	// US United States
	// GB United Kingdom
	// DE Germany
	// FR France
	// IN India
	// BR Brazil
	// AU Australia
	// CA Canada
}

// A stand-in for opm in the serving image tests: statically linked (no cgo),
// it prints what it was called as and with.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	fmt.Printf("fakeopm as=%s args=%s\n", filepath.Base(os.Args[0]), strings.Join(os.Args[1:], " "))
}

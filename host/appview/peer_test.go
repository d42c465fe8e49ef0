package appview

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
)

// getEnv makes the test binary, run as another user, fetch that address and print the status.
const getEnv = "APPVIEW_TEST_GET"

func TestMain(m *testing.M) {
	if u := os.Getenv(getEnv); u != "" {
		res, err := http.Get(u)
		if err != nil {
			fmt.Println("refused:", err)
			os.Exit(0)
		}
		body, _ := io.ReadAll(res.Body)
		fmt.Println("status", res.StatusCode, len(body))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

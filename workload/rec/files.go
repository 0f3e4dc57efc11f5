package rec

import (
	"fmt"
	"os"
	"path/filepath"

	"graphfed/graph"
)

// WriteClients writes each client to out/<client id> in the LightGCN layout
// (train.txt, test.txt, local ids), creating the directories.
func WriteClients(out string, clients []Client) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("rec: write clients: %w", err)
	}
	for _, c := range clients {
		if err := c.Data.WriteLightGCN(filepath.Join(out, c.ID)); err != nil {
			return fmt.Errorf("rec: write client %s: %w", c.ID, err)
		}
	}
	return nil
}

// LoadClient reads a client directory WriteClients wrote (or any LightGCN
// directory holding one client's data in local ids).
func LoadClient(dir string) (*graph.Interactions, error) {
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		return nil, fmt.Errorf("rec: load client: %w", err)
	}
	return d, nil
}

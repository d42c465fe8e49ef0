package host

import "slices"

// ChangeFolders removes then adds workspace folders (absolute paths; a removed one that is not
// there is ignored, an added one already there is not added twice), under one lock, and reapplies
// the configuration as SetFolders does. Servers hear of it only when the folders changed.
func (a *App) ChangeFolders(added, removed []string) {
	a.stateMu.Lock()
	folders := slices.Clone(a.folders)
	for _, r := range removed {
		if i := slices.Index(folders, r); i >= 0 {
			folders = slices.Delete(folders, i, i+1)
		}
	}
	for _, p := range added {
		if !slices.Contains(folders, p) {
			folders = append(folders, p)
		}
	}
	same := slices.Equal(folders, a.folders)
	a.folders = folders
	a.stateMu.Unlock()
	// An event that changes nothing (VS Code sends one when folders are reordered or renamed)
	// tells no server its roots changed: one shared at workspace scope would be moved to the
	// instance it is on, its calls and tasks in flight cut.
	if !same {
		a.registry.RootsChanged()
	}
	a.reapply()
}

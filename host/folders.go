package host

import "slices"

// ChangeFolders removes then adds workspace folders (absolute paths; a removed one that is not
// there is ignored, an added one already there is not added twice), under one lock, and reapplies
// the configuration as SetFolders does.
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
	a.folders = folders
	a.stateMu.Unlock()
	a.registry.RootsChanged()
	a.reapply()
}

package quota

// Library is the function library as FUNCTION LOAD is sent it, and its name.
func Library() (name, code string) { return lib().name, lib().code }

// LibraryName is the name a library's text earns (nameOf), with
// LibraryPlaceholder where the name goes.
var LibraryName = nameOf

// LibraryPlaceholder stands for the name while a library's text is hashed.
const LibraryPlaceholder = libraryName

# cudaenv tab completion for fish. Load it from ~/.config/fish/config.fish with
#   cudaenv completion fish | source
# or save it as ~/.config/fish/completions/cudaenv.fish
function __cudaenv_complete
    set -l args
    for t in (commandline -opc)[2..-1]
        set -a args ":$t"
    end
    set -l cur (commandline -ct)
    set -a args (string join -- '' : $cur)
    set -l lines (cudaenv __complete $args 2>/dev/null)
    switch "$lines[1]"
        case :dirs
            __fish_complete_directories "$cur"
        case :files
            __fish_complete_path "$cur"
        case :commands
            complete -C "$cur"
        case '*'
            printf '%s\n' $lines
    end
end
complete -c cudaenv -f -a '(__cudaenv_complete)'

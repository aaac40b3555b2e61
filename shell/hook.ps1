# cudaenv shell integration for PowerShell: add to $PROFILE
#   cudaenv init pwsh | Out-String | Invoke-Expression
function global:cudaenv {
  if ($args.Count -gt 0 -and $args[0] -ceq 'use') {
    $rest = @($args | Select-Object -Skip 1)
    $out = & @CUDAENV@ shell-use pwsh @rest
    if ($LASTEXITCODE -ne 0) { return }
    $out | Out-String | Invoke-Expression
  } else {
    & @CUDAENV@ @args
  }
}
function global:__cudaenv_check { return $false }
function global:__cudaenv_hook {
  if (-not (__cudaenv_check)) {
    & @CUDAENV@ hook-env pwsh | Out-String | Invoke-Expression
  }
}
if (-not (Test-Path -LiteralPath 'Variable:global:__cudaenv_prompt')) {
  $global:__cudaenv_prompt = $function:prompt
  function global:prompt {
    $ok = $?
    $code = $global:LASTEXITCODE
    __cudaenv_hook
    $global:LASTEXITCODE = $code
    if (-not $ok) { Write-Error -Message '' -ErrorAction Ignore }
    & $global:__cudaenv_prompt
  }
}

;;; eglot.el --- drives Emacs's Eglot against `fuzzls serve' (TestEmacs)  -*- lexical-binding: t -*-

;; The README's Eglot set-up, run headless: fuzzls in eglot-server-programs for
;; go-mode with autoStart "openFiles" (Eglot has no code lenses), calc_test.go
;; and calc.go opened, the crash diagnostic awaited through Flymake, the code
;; actions on its line asked for as `M-x eglot-code-actions' asks, "Add input
;; to seed corpus" picked and run, and Eglot's own shutdown. What it saw goes
;; to $FUZZLS_EMACS_OUT as JSON; it always ends Emacs.

(require 'eglot)
(require 'json)

;; Emacs 28 has no Go mode of its own; go-mode's name is what matters here.
(define-derived-mode go-mode prog-mode "Go")
(add-to-list 'auto-mode-alist '("\\.go\\'" . go-mode))

(let* ((out (getenv "FUZZLS_EMACS_OUT"))
       (root (file-name-as-directory (getenv "FUZZLS_EMACS_ROOT")))
       (bin (getenv "FUZZLS_BIN"))
       (cache (getenv "FUZZLS_EMACS_CACHE"))
       (result (list :diagnostics [] :actions [] :executed :json-false :error "")))
  (add-to-list 'eglot-server-programs
               `(go-mode . (,bin "serve" :initializationOptions
                                 (:autoStart "openFiles" :parallel 1 :cacheDir ,cache))))
  ;; The workspace is not a VCS checkout: it is the project as it is.
  (add-hook 'project-find-functions (lambda (_dir) (cons 'transient root)))
  (condition-case err
      (let (calc diags)
        (find-file (expand-file-name "calc_test.go" root))
        ;; What `eglot-ensure' does once the command loop runs.
        (apply #'eglot (eglot--guess-contact))
        (find-file (expand-file-name "calc.go" root))
        (setq calc (current-buffer))
        (unless (eglot-managed-p) (error "calc.go is not managed by Eglot"))
        (let ((deadline (+ (float-time) 60)))
          (while (and (null (setq diags (with-current-buffer calc (flymake-diagnostics))))
                      (< (float-time) deadline))
            (accept-process-output nil 0.2)
            ;; What Flymake's idle timer does in an interactive Emacs.
            (with-current-buffer calc (flymake-start nil t))))
        (unless diags (error "no diagnostic in calc.go within 60 s"))
        (with-current-buffer calc
          (setq result
                (plist-put result :diagnostics
                           (vconcat (mapcar (lambda (d)
                                              (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                                                    :message (flymake-diagnostic-text d)))
                                            diags))))
          (goto-char (flymake-diagnostic-beg (car diags)))
          (let ((actions (eglot-code-actions (line-beginning-position) (line-end-position))))
            (setq result (plist-put result :actions
                                    (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))))
          ;; M-x eglot-code-actions from the keyboard, the user picking the action.
          (let ((last-nonmenu-event ?\C-m)
                (completing-read-function (lambda (&rest _) "Add input to seed corpus")))
            (eglot-code-actions (line-beginning-position) (line-end-position) nil t))
          (setq result (plist-put result :executed t))))
    (error (setq result (plist-put result :error (error-message-string err)))))
  (with-temp-file out (insert (json-encode result)))
  (ignore-errors (eglot-shutdown-all))
  (kill-emacs 0))

;;; eglot.el ends here
